// Unit specs that spawn processes (sh, bwrap, git) wait on fork and exec, which take seconds on
// two loaded cores: jest's 5 s default failed them in CI while the code was fine. Set here because
// jest applies `testTimeout` only from the top level of its config, not from a project's.
jest.setTimeout(20_000);
