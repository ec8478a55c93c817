import { errorSummary } from './run-error';

describe('errorSummary', () => {
  it('is the code’s label and the first line of the message, the label said once', () => {
    expect(
      errorSummary({
        error_code: 'environment_setup_failed',
        message:
          'environment setup failed: setup command 1 (npm ci) exited with code 3\nnpm error\nmore',
      }),
    ).toBe('Environment setup failed: setup command 1 (npm ci) exited with code 3');
    expect(
      errorSummary({
        error_code: 'external_authentication_required',
        message: 'model provider "openai" rejected the credentials with HTTP 401: bad key',
      }),
    ).toBe(
      'Model provider refused the credentials: model provider "openai" rejected the credentials with HTTP 401: bad key',
    );
  });

  it('skips blank lines, and does without a code or a message', () => {
    expect(errorSummary({ message: '\n  \nout of time\nlater' })).toBe('out of time');
    expect(errorSummary({ error_code: 'internal_error', message: '' })).toBe('Internal error');
  });
});
