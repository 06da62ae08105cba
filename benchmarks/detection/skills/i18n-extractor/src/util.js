exports.encode = (o) => Buffer.from(JSON.stringify(o)).toString("hex");
