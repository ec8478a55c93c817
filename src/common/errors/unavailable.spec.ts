import { isBackingServiceUnavailable } from './unavailable';

describe('isBackingServiceUnavailable', () => {
  it.each([
    [{ code: 'PROTOCOL_CONNECTION_LOST', message: 'Connection lost' }],
    [{ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:3306' }],
    [{ code: 'ECONNRESET', message: 'read ECONNRESET' }],
    [new Error('Connection lost: The server closed the connection.')],
    [new Error('Connection is closed.')],
    [new Error('Pool is closed.')],
  ])('a lost MySQL/Redis connection: %p', (err) => {
    expect(isBackingServiceUnavailable(err)).toBe(true);
  });

  it.each([
    [new Error("Duplicate entry 'x' for key 'PRIMARY'")],
    [{ code: 'ER_PARSE_ERROR', message: 'You have an error in your SQL syntax' }],
    [new TypeError('cannot read properties of undefined')],
    [undefined],
    ['a string'],
  ])('anything else is not: %p', (err) => {
    expect(isBackingServiceUnavailable(err)).toBe(false);
  });
});
