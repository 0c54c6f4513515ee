/** Every workflow the worker registers. */
export { invoiceWorkflow } from './invoice';
