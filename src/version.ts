/**
 * The package's version, read from its package.json: the repository root's when run from `src/`, the installed
 * package's when run from `dist/` (both one folder up).
 */
// A require, not an import: package.json lies outside the compiled `src/` folder and must not be copied into `dist/`.
const manifest = require('../package.json') as { name: string; version: string };

/** The version of this package, as `--version` prints it and the server reports it. */
export const PACKAGE_VERSION: string = manifest.version;

/** The package's name. */
export const PACKAGE_NAME: string = manifest.name;
