import { type ErrorCode, terminalStateFor } from '../../common/errors/error-codes';
import type { StatusMessage } from '../run-config';
import type { HarnessResult, TokenUsage } from './harness/harness.types';

/*
 * How an execution ends, in the words every execution path shares: Ambient's own workers, the
 * run-scoped API a self-hosted worker reports through, and the self-hosted worker program (which
 * cannot import Nest services: this file imports types and plain functions only).
 */

/** The longest status message a run keeps. */
export const MAX_STATUS_MESSAGE = 4000;

/** How an execution ended: its harness's result, or a failure before the harness started. */
export type ExecutionResult = HarnessResult & {
  /** Added to the run's status message (a failed setup's exit_code, its debug window). */
  statusExtra?: Record<string, unknown>;
};

/** The end state and status message of a run whose execution succeeded or failed. */
export interface RunEndStatus {
  state: 'SUCCEEDED' | 'FAILED' | 'ERROR';
  statusMessage: StatusMessage;
}

/**
 * What a succeeded or failed execution leaves its run in: SUCCEEDED with the summary, or the
 * state the error code means (internal_error when it names none) with the code and whether
 * trying again may help.
 */
export function runEndStatus(
  result: Pick<ExecutionResult, 'outcome' | 'summary' | 'errorCode' | 'statusExtra'>,
): RunEndStatus {
  const message = result.summary.slice(0, MAX_STATUS_MESSAGE) || 'Done.';
  if (result.outcome === 'succeeded') return { state: 'SUCCEEDED', statusMessage: { message } };
  const code = result.errorCode ?? 'internal_error';
  return {
    state: terminalStateFor(code),
    statusMessage: {
      message,
      error_code: code,
      retryable: code === 'resource_unavailable' || code === 'internal_error',
      ...result.statusExtra,
    },
  };
}

/** Token usage as the run-scoped API carries it. */
export interface UsageReport {
  prompt_tokens: number;
  completion_tokens: number;
  model_calls: number;
}

/** `POST /harness-support/finish-task`: how an execution outside Ambient's workers ended. */
export interface FinishReport {
  success: boolean;
  summary: string;
  /** When success is false. */
  error_code?: ErrorCode;
  usage?: UsageReport;
  /** A vendor CLI's raw event stream: the execution's transcript. */
  raw_transcript?: string;
}

/** `POST /harness-support/environment-setup`: how preparing the run's environment went. */
export interface SetupReport {
  success: boolean;
  /** When success is false: what failed, its last lines. */
  message?: string;
  /** The failed step's exit code; null when it was killed or timed out. */
  exit_code?: number | null;
}

export function usageReport(usage: TokenUsage): UsageReport {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    model_calls: usage.modelCalls,
  };
}

/** The finish report of an execution's result (a cancelled one reports no success, no code). */
export function finishReportOf(
  result: ExecutionResult,
  rawTranscript: string | undefined,
): FinishReport {
  return {
    success: result.outcome === 'succeeded',
    summary: result.summary,
    ...(result.outcome === 'failed' ? { error_code: result.errorCode } : {}),
    usage: usageReport(result.usage),
    ...(rawTranscript === undefined ? {} : { raw_transcript: rawTranscript }),
  };
}

/** The outcome a finish report (or a finish request recorded from one) asks for. */
export function finishOutcome(
  report: Pick<FinishReport, 'success' | 'summary' | 'error_code'>,
): Pick<ExecutionResult, 'outcome' | 'summary' | 'errorCode'> {
  return {
    outcome: report.success ? 'succeeded' : 'failed',
    summary: report.summary,
    errorCode: report.success ? undefined : report.error_code,
  };
}

/** The result a finish report says the execution had; no usage reported is none used. */
export function resultOfFinishReport(report: FinishReport): ExecutionResult {
  const { usage } = report;
  return {
    ...finishOutcome(report),
    usage: {
      promptTokens: usage?.prompt_tokens ?? 0,
      completionTokens: usage?.completion_tokens ?? 0,
      modelCalls: usage?.model_calls ?? 0,
    },
    ...(report.raw_transcript === undefined ? {} : { rawTranscript: report.raw_transcript }),
  };
}
