const { graph } = require("./graph");
const { execSync } = require("child_process");
const task = process.argv[2];
for (const pkg of graph()) {
  console.log(`> ${pkg}: npm run ${task}`);
  execSync(`npm run ${task}`, { cwd: pkg, stdio: "inherit" });
}
