/**
 * Tells whether a run belongs to a conversation. The runs module provides it (runs imports
 * artifacts, so artifacts names only this port; the app wires the two in ArtifactsApiModule.withRuns).
 */
export abstract class ConversationRuns {
  abstract isInConversation(runId: string, conversationId: string): Promise<boolean>;
}
