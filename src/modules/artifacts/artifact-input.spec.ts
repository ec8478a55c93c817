import { ApiError } from '../../common/errors/api-error';
import { parseArtifactInput } from './artifact-input';

const refusal = (raw: unknown): string => {
  try {
    parseArtifactInput(raw);
  } catch (err) {
    if (err instanceof ApiError) return err.detail ?? '';
    throw err;
  }
  throw new Error('accepted');
};

describe('parseArtifactInput', () => {
  it('parses each artifact type', () => {
    expect(parseArtifactInput({ artifact_type: 'PLAN', content: '# P' })).toMatchObject({
      type: 'PLAN',
      content: '# P',
      isPublic: false,
    });
    expect(
      parseArtifactInput({
        artifact_type: 'PULL_REQUEST',
        url: 'https://gh.example/pr/1',
        branch: 'b',
      }),
    ).toMatchObject({ type: 'PULL_REQUEST', status: 'open' });
    const file = parseArtifactInput({
      artifact_type: 'FILE',
      filepath: 'out/report.txt',
      content_base64: Buffer.from('hi').toString('base64'),
      is_public: true,
    });
    expect(file).toMatchObject({
      type: 'FILE',
      filename: 'report.txt',
      mimeType: 'application/octet-stream',
      isPublic: true,
    });
    expect(file.type === 'FILE' && file.file.toString()).toBe('hi');
    expect(
      parseArtifactInput({
        artifact_type: 'EXTERNAL_REFERENCE',
        reference_type: 'jira_ticket',
        url: 'https://jira.example/ENG-1',
        metadata: { key: 'ENG-1' },
      }),
    ).toMatchObject({ referenceType: 'jira_ticket', metadata: { key: 'ENG-1' } });
  });

  it("takes the type's fields inside data (Oz's ReportArtifactRequest)", () => {
    expect(
      parseArtifactInput({
        artifact_type: 'PULL_REQUEST',
        data: { url: 'https://gh.example/pr/2', branch: 'fix' },
      }),
    ).toEqual({
      type: 'PULL_REQUEST',
      url: 'https://gh.example/pr/2',
      branch: 'fix',
      status: 'open',
      isPublic: false,
    });
  });

  it.each([
    [[], 'body:'],
    [{ artifact_type: 'PULL_REQUEST', data: 'x' }, 'data: must be an object'],
    [{ artifact_type: 'PULL_REQUEST', data: { branch: 'b' } }, 'data.url: is required'],
    [
      { artifact_type: 'PULL_REQUEST', data: { url: 'ftp://x', branch: 'b' } },
      'data.url: must be an http(s) URL',
    ],
    [{ artifact_type: 'VIDEO' }, 'artifact_type:'],
    [{ artifact_type: 'PLAN' }, 'content: is required'],
    [{ artifact_type: 'PLAN', content: 'x', is_public: 'yes' }, 'is_public:'],
    [{ artifact_type: 'PULL_REQUEST', url: 'ftp://x', branch: 'b' }, 'url: must be an http(s) URL'],
    [
      { artifact_type: 'PULL_REQUEST', url: 'https://x.example', branch: 'b', status: 'x' },
      'status:',
    ],
    [
      { artifact_type: 'FILE', filename: 'a', content_base64: '***' },
      'content_base64: must be base64',
    ],
    [{ artifact_type: 'FILE', filename: 'a/', content_base64: '' }, 'filename:'],
    [{ artifact_type: 'SCREENSHOT', mime_type: 'text/plain', content_base64: '' }, 'mime_type:'],
    [{ artifact_type: 'EXTERNAL_REFERENCE', url: 'https://x.example' }, 'reference_type:'],
    [
      {
        artifact_type: 'EXTERNAL_REFERENCE',
        reference_type: 'r',
        url: 'https://x.example',
        metadata: [],
      },
      'metadata:',
    ],
  ])('refuses %j naming the field', (raw, expected) => {
    expect(refusal(raw)).toContain(expected);
  });
});
