import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from '../../common/errors/api-error';
import { BLOB_STORE, BlobStore, SignedUrl, UrlSigner } from '../blobs';
import {
  contentDeletedError,
  Run,
  sessionIdOf,
  RunLookupRepository,
  ConversationRunRepository,
  isTerminal,
  ExecutionInfo,
  toConversationSteps,
} from '../runs';
import type { Conversation } from '../runs';
import {
  conversationTranscriptKey,
  renderedTranscriptKey,
  runTranscriptKey,
} from './transcript-keys';
import { TranscriptWriter } from './transcript-writer.service';

/** Reads a run's or a conversation's messages back as the normalized Oz conversation. */
@Injectable()
export class ConversationsService {
  constructor(
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    private readonly signer: UrlSigner,
    private readonly transcripts: TranscriptWriter,
    private readonly runLookup: RunLookupRepository,
    private readonly runsOfConversations: ConversationRunRepository,
  ) {}

  async forRun(teamId: string, runId: string): Promise<Conversation> {
    const run = await this.visibleRun(teamId, runId);
    if (run.contentDeletedAt) throw contentDeletedError(run, 'conversation');
    return this.build(run.conversationId, [run]);
  }

  async forConversation(teamId: string, conversationId: string): Promise<Conversation> {
    return this.build(conversationId, await this.conversationRuns(teamId, conversationId));
  }

  async runTranscriptUrl(teamId: string, runId: string): Promise<SignedUrl> {
    const keptRun = async () => {
      const run = await this.visibleRun(teamId, runId);
      if (run.contentDeletedAt) throw contentDeletedError(run, 'transcript');
      return run;
    };
    const run = await keptRun();
    const rendered = await this.transcripts.render(run.id);
    // Nothing of this run's own (the conversation's other runs may have recorded some).
    if (!rendered?.run) throw ApiError.notFound('transcript');
    const filename = `transcript-${runId}.jsonl`;
    return this.renderedUrl(runTranscriptKey(runId), rendered.run, filename, keptRun);
  }

  async conversationTranscriptUrl(teamId: string, conversationId: string): Promise<SignedUrl> {
    const keptRuns = () => this.conversationRuns(teamId, conversationId);
    const runs = await keptRuns();
    const rendered = await this.transcripts.render(runs[0].id);
    if (!rendered) throw ApiError.notFound('transcript');
    const filename = `transcript-${conversationId}.jsonl`;
    return this.renderedUrl(
      conversationTranscriptKey(conversationId),
      rendered.conversation,
      filename,
      keptRuns,
    );
  }

  /**
   * `GET /agent/sessions/{uuid}/redirect`: a session is a run's sandbox (its uuid is the run id,
   * `sessionIdOf`). Once the run has ended and its conversation has something recorded, the
   * session page should give way to the conversation: `{conversation_id}`; else `{}`. `teamId`
   * null (no key: the endpoint is public, the uuid is the capability) looks across teams.
   */
  async sessionRedirect(
    teamId: string | null,
    sessionUuid: string,
  ): Promise<{ runId: string; body: { conversation_id?: string } }> {
    const run = await this.runLookup.findOfTeam(sessionUuid, teamId);
    if (!run) throw ApiError.notFound(`session ${sessionUuid}`);
    const finished = isTerminal(run.state) && (await this.hasRecords(run.id));
    return { runId: run.id, body: finished ? { conversation_id: run.conversationId } : {} };
  }

  /**
   * `GET /agent/conversations/{id}/redirect`: while the conversation's latest run has a live
   * sandbox, the conversation page should give way to that session: `{session_id}`; else `{}`.
   */
  async conversationRedirect(
    teamId: string | null,
    conversationId: string,
  ): Promise<{ runId: string; body: { session_id?: string } }> {
    const latest = await this.runsOfConversations.latestInConversation(conversationId, teamId);
    if (!latest) throw ApiError.notFound(`conversation ${conversationId}`);
    const live = latest.state === 'CLAIMED' || latest.state === 'INPROGRESS';
    const sessionId = live ? sessionIdOf(latest) : undefined;
    return { runId: latest.id, body: sessionId ? { session_id: sessionId } : {} };
  }

  /** Whether a run has anything its conversation would show (a message or an execution event). */
  private hasRecords(runId: string): Promise<boolean> {
    return this.runsOfConversations.hasRecords(runId);
  }

  /**
   * A transcript as rendered for this request, under a key of its own beside the transcript's
   * (TranscriptWriter): each request puts what was recorded by then, and signs it. `kept` is the
   * request's own check that the content retention has not deleted the content, run again after
   * the put: a sweep that deleted it while it was rendered (and its blobs before this put) has
   * the put taken back and the request answered as the check answers.
   */
  private async renderedUrl(
    key: string,
    text: string,
    filename: string,
    kept: () => Promise<unknown>,
  ): Promise<SignedUrl> {
    const rendered = renderedTranscriptKey(key);
    await this.blobs.put(rendered, text);
    try {
      await kept();
    } catch (err) {
      await this.blobs.delete(rendered);
      throw err;
    }
    return this.signer.sign({ key: rendered, contentType: 'application/x-ndjson', filename });
  }

  private async visibleRun(teamId: string, runId: string): Promise<Run> {
    const run = await this.runLookup.findOfTeam(runId, teamId);
    if (!run) throw ApiError.notFound(`run ${runId}`);
    return run;
  }

  /** The conversation's runs; 404 when it has none, or when the retention deleted all their content. */
  private async conversationRuns(teamId: string, conversationId: string): Promise<Run[]> {
    const runs = await this.runsOfConversations.listInConversation(teamId, conversationId);
    if (runs.length === 0) throw ApiError.notFound(`conversation ${conversationId}`);
    const latest = runs[runs.length - 1];
    if (runs.every((run) => run.contentDeletedAt))
      throw contentDeletedError(latest, 'conversation');
    return runs;
  }

  private async build(conversationId: string, runs: Run[]): Promise<Conversation> {
    const rows = await this.runsOfConversations.messagesOf(runs.map((r) => r.id));
    const events = await this.runsOfConversations.executionEventsOf(runs.map((r) => r.id));
    if (rows.length === 0 && events.length === 0) {
      throw ApiError.notFound(`conversation ${conversationId} (nothing recorded yet)`);
    }
    const executions: ExecutionInfo[] = runs.flatMap((run) =>
      Array.from({ length: run.executionCount }, (_, i) => ({
        runId: run.id,
        executionId: i + 1,
        title: run.title,
        harness: run.config.harness?.type ?? 'oz',
        summary:
          i + 1 === run.executionCount && isTerminal(run.state)
            ? run.statusMessage?.message
            : undefined,
      })),
    );
    const stepEvents = events.map((e) => ({ ...e, executionId: e.executionId! }));
    return {
      conversation_id: conversationId,
      steps: toConversationSteps(rows, executions, stepEvents),
    };
  }
}
