/** What other modules may use of approvals/: they import it from here only (ESLint rule ambient/import-through-index). */
export { approvalPayload } from './approval.mapper';
export { ApprovalsModule } from './approvals.module';
