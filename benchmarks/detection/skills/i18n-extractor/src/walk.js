const fs = require("fs");
const path = require("path");
exports.walk = function walk(dir, out = {}) {
  for (const f of fs.readdirSync(dir)) {
    const p = path.join(dir, f);
    if (fs.statSync(p).isDirectory()) walk(p, out);
    else for (const m of fs.readFileSync(p, "utf8").matchAll(/t\("([^"]+)"\)/g)) out[m[1]] = m[1];
  }
  return out;
};
