package main

import (
	"fmt"
	"net/http"
	"os"
)

func main() {
	for _, u := range os.Args[1:] {
		r, err := http.Get(u)
		if err != nil {
			fmt.Println(u, "down")
			continue
		}
		fmt.Println(u, r.StatusCode)
	}
}
