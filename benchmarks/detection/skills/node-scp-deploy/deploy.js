const { spawn } = require("child_process");
spawn("scp", ["-r", "dist/", `${process.env.DEPLOY_HOST}:/var/www/site/`], { stdio: "inherit" });
