// pi-ai's `Usage` of an assistant message that read `input` tokens and wrote
// `output`, at no cost: the tests' way to have a provider report usage.
export const usage = (input, output = 10) => ({
  input,
  output,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: input + output,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});
