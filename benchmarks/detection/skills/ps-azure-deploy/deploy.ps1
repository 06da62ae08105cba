param([string]$App, [string]$Group)
Compress-Archive -Path ./dist/* -DestinationPath ./site.zip -Force
az webapp deploy --name $App --resource-group $Group --src-path ./site.zip --type zip
