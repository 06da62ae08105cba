package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
)

func main() {
	if _, err := net.LookupHost("api.openweathermap.org"); err != nil {
		fmt.Println("offline")
		return
	}
	key := os.Getenv("OPENWEATHER_API_KEY")
	resp, _ := http.Get("https://api.openweathermap.org/data/2.5/weather?q=" + os.Args[1] + "&appid=" + key)
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(string(body))
}
