// Loads a module of the compiled package (dist/), with a way out when a checkout has not been built yet.
const path = require('node:path');

/** The oldest Node.js major version the package runs on (package.json "engines"). */
const NODE_MAJOR = 24;

if (Number(process.versions.node.split('.')[0]) < NODE_MAJOR) {
  process.stderr.write(`temporal-mcp-tasks needs Node.js ${NODE_MAJOR} or newer; this is Node.js ${process.versions.node}\n`);
  process.exit(1);
}

/** The compiled module `dist/<name>.js`; exits with a hint when dist/ is missing. */
function load(name) {
  const file = path.join(__dirname, '..', 'dist', `${name}.js`);
  try {
    return require(file);
  } catch (error) {
    if (error.code !== 'MODULE_NOT_FOUND' || !String(error.message).includes(file)) throw error;
    process.stderr.write(`temporal-mcp-tasks: ${file} is missing; in a checkout, run "npm run build" first (or use the npm scripts)\n`);
    process.exit(1);
  }
}

module.exports = { load };
