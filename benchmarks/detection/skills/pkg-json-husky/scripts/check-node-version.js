const major = Number(process.versions.node.split('.')[0]);
if (major < 18) { console.error('Node 18+ required'); process.exit(1); }
