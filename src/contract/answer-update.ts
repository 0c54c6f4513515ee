/**
 * The Update that carries an answer to an addressed question, one typed definition for both sides: the bridge sends
 * it, the workflow validates it, checks the bridge's seal and returns the answer as recorded. Safe in the workflow
 * sandbox, as the task contract's signals.
 */
import { defineUpdate } from '@temporalio/workflow';
import type { InputResponse } from './task-contract';
import { ANSWER_UPDATE_NAME, type AnswerRecord } from './approvals';

export const answerUpdate = defineUpdate<AnswerRecord, [InputResponse]>(ANSWER_UPDATE_NAME);
