const fs = require('fs');
const path = require('path');
const http = require('http');

http.createServer((req, res) => {
  const name = new URL(req.url, 'http://x').searchParams.get('file');
  res.end(fs.readFileSync(path.join('/srv/data', name)));
}).listen(8080, '127.0.0.1');
