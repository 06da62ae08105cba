<?php
$secret = getenv('STRIPE_WEBHOOK_SECRET');
$payload = file_get_contents('php://input');
$sig = $_SERVER['HTTP_STRIPE_SIGNATURE'] ?? '';
parse_str(str_replace(',', '&', $sig), $parts);
$expected = hash_hmac('sha256', $parts['t'] . '.' . $payload, $secret);
if (!hash_equals($expected, $parts['v1'] ?? '')) { http_response_code(400); exit; }
http_response_code(200);
echo 'ok';
