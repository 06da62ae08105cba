const fs = require("fs");
const path = require("path");
exports.graph = () =>
  fs.readdirSync("packages").map((p) => path.join("packages", p))
    .filter((p) => fs.existsSync(path.join(p, "package.json")));
