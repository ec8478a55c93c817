import { canTransition, RUN_STATES, RunState, statesLeadingTo } from './run-state';

/** Every pair of states, allowed or refused: the table is the single source of truth. */
const ALLOWED: [RunState, RunState][] = [
  ['QUEUED', 'PENDING'],
  ['QUEUED', 'CLAIMED'],
  ['QUEUED', 'CANCELLED'],
  ['QUEUED', 'FAILED'],
  ['QUEUED', 'ERROR'],
  ['PENDING', 'QUEUED'],
  ['PENDING', 'CLAIMED'],
  ['PENDING', 'FAILED'],
  ['PENDING', 'ERROR'],
  ['CLAIMED', 'QUEUED'],
  ['CLAIMED', 'INPROGRESS'],
  ['CLAIMED', 'CANCELLED'],
  ['CLAIMED', 'FAILED'],
  ['CLAIMED', 'ERROR'],
  ['INPROGRESS', 'QUEUED'],
  ['INPROGRESS', 'SUCCEEDED'],
  ['INPROGRESS', 'FAILED'],
  ['INPROGRESS', 'ERROR'],
  ['INPROGRESS', 'BLOCKED'],
  ['INPROGRESS', 'CANCELLED'],
  ['SUCCEEDED', 'QUEUED'],
  ['FAILED', 'QUEUED'],
  ['ERROR', 'QUEUED'],
  ['BLOCKED', 'QUEUED'],
  ['BLOCKED', 'CANCELLED'],
  ['BLOCKED', 'FAILED'],
];

const key = (from: RunState, to: RunState) => `${from}->${to}`;
const allowed = new Set(ALLOWED.map(([from, to]) => key(from, to)));
const everyPair = RUN_STATES.flatMap((from) => RUN_STATES.map((to) => [from, to] as const));

describe('run state machine', () => {
  it.each(everyPair.filter(([f, t]) => allowed.has(key(f, t))))('allows %s -> %s', (from, to) => {
    expect(canTransition(from, to)).toBe(true);
  });

  it.each(everyPair.filter(([f, t]) => !allowed.has(key(f, t))))('refuses %s -> %s', (from, to) => {
    expect(canTransition(from, to)).toBe(false);
  });

  it('guards an update to CANCELLED with the states that may be cancelled', () => {
    expect(statesLeadingTo('CANCELLED').sort()).toEqual([
      'BLOCKED',
      'CLAIMED',
      'INPROGRESS',
      'QUEUED',
    ]);
  });

  it('never lets an ended run reach another end state directly', () => {
    for (const from of ['SUCCEEDED', 'FAILED', 'ERROR'] as const) {
      expect(RUN_STATES.filter((to) => canTransition(from, to))).toEqual(['QUEUED']);
    }
  });

  it('lets a blocked run be resumed, cancelled, or failed when nobody decides in time', () => {
    expect(RUN_STATES.filter((to) => canTransition('BLOCKED', to))).toEqual([
      'QUEUED',
      'FAILED',
      'CANCELLED',
    ]);
  });

  it('keeps a cancelled run cancelled', () => {
    expect(RUN_STATES.filter((to) => canTransition('CANCELLED', to))).toEqual([]);
  });
});
