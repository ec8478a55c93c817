describe('cgroupOwnerSuffix', () => {
  afterEach(() => jest.resetModules());

  it('reads this process start time once it could, never keeping a failed read', () => {
    const startTimeOf = jest.fn<string | null, [number]>();
    startTimeOf.mockReturnValueOnce(null).mockReturnValue('4242');
    jest.doMock('./backends/docker/pool-owner', () => ({ startTimeOf }));
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { cgroupOwnerSuffix } = require('./cgroup-owner') as typeof import('./cgroup-owner');

    expect(cgroupOwnerSuffix()).toBe(`.${process.pid}.0`);
    expect(cgroupOwnerSuffix()).toBe(`.${process.pid}.4242`);
    expect(cgroupOwnerSuffix()).toBe(`.${process.pid}.4242`);
    expect(startTimeOf).toHaveBeenCalledTimes(2);
  });
});
