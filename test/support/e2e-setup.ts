// e2e tests boot whole applications and wait for real processes (unit tests: unit-setup.ts).
// This is a hang guard, not an expectation (those are the specs' waitFor bounds): in a CI run
// beside other work (load 10-20 on two cores) tests that start worker processes and sandboxes
// took 60-90 s while every assertion held.
jest.setTimeout(120_000);
