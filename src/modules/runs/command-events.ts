/**
 * A command on the run's timeline (the agent's `run_command`): `command_started {command_id,
 * command}`, `command_output {command_id, seq, text, truncated?}` while it runs, and
 * `command_finished {command_id, exit_code, timed_out, killed?, error?, duration_ms}`. A setup
 * command's output is `command_output` too, between `setup_command_started` and its
 * `setup_command_succeeded` / `setup_command_failed` (same `command_id`).
 */
export const COMMAND_STARTED_EVENT = 'command_started';
export const COMMAND_OUTPUT_EVENT = 'command_output';
export const COMMAND_FINISHED_EVENT = 'command_finished';

/** Left out of the conversation's event messages: the tool call and its result say the same. */
export const COMMAND_EVENTS = [COMMAND_STARTED_EVENT, COMMAND_OUTPUT_EVENT, COMMAND_FINISHED_EVENT];
