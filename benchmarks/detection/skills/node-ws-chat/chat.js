const WebSocket = require('ws');
const readline = require('readline');
const ws = new WebSocket(process.argv[2]);
ws.on('message', m => console.log('<', m.toString()));
readline.createInterface({ input: process.stdin }).on('line', line => ws.send(line));
