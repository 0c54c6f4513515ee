/**
 * The samples of `temporal-mcp-tasks` (the package's `samples` entry), for a server that wants them beside its own
 * tools: `createBridge({ temporal, tools: [...DEFAULT_TOOLS, ...SAMPLE_TOOLS] })`. Nothing in the `.` entry includes
 * them. Their workflows run on the sample worker, `temporal-mcp-tasks worker`, polling the bridge's task queue. Every
 * name here is covered by semantic versioning.
 */
export { SAMPLE_TOOLS } from './mcp/tools/samples';
