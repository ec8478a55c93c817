// e2e tests boot whole applications and wait for real processes; unit tests keep jest's 5 s.
jest.setTimeout(60_000);
