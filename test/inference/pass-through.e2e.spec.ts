import OpenAI from 'openai';
import { encode, encodeChat } from 'gpt-tokenizer';
import { startUpstream, Upstream } from '../../bench/openai-upstream';
import { payOnPage, PAYS } from '../commerce/commerce-client';
import { startTestApp, TestApp } from '../support/app';
import { ask, openaiFor, usageOf } from './inference-client';

/**
 * Issue 24: no OpenAI field is silently dropped. Live mode forwards what it does not use
 * itself and answers what the upstream answered; the sandbox honours n and json_object and
 * refuses, naming it, what it cannot honour. Driven by the official `openai` client.
 */
const tools: OpenAI.ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'move_arm',
      description: 'Moves the arm to a pose.',
      parameters: { type: 'object', properties: { request: { type: 'string' }, step: { type: 'integer' } }, required: ['request'] },
    },
  },
  {
    type: 'function',
    function: { name: 'open_gripper', description: 'Opens the gripper.', parameters: { type: 'object', properties: {} } },
  },
];
const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');
const roundTrip = (value: unknown) => JSON.parse(JSON.stringify(value));

async function collect(stream: AsyncIterable<OpenAI.ChatCompletionChunk>): Promise<OpenAI.ChatCompletionChunk[]> {
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

describe('OpenAI fields pass through live mode unchanged, through the official openai client', () => {
  let upstream: Upstream;
  let t: TestApp;
  let key: string;
  let client: OpenAI;

  beforeAll(async () => {
    upstream = await startUpstream({ tokens: 20 });
    t = await startTestApp({ env: { INFERENCE_UPSTREAM_URL: upstream.url, INFERENCE_UPSTREAM_MODELS: 'svc-fast-8b=llama3.1:8b', INFERENCE_UPSTREAM_TIMEOUT_MS: '2000' } });
    await t.app.listen(0, '127.0.0.1');
    const { accountId } = await t.accountWithKey({ tier: 'premium' });
    const created = await t.admin('POST', '/admin/keys', { account: accountId, mode: 'live', tier: 'premium' });
    if ((await payOnPage(t, created.body.activation_checkout_url, PAYS)).status !== 200) throw new Error('activation failed');
    key = created.body.key;
    client = openaiFor(t, key);
  });
  afterAll(async () => {
    await t.close();
    await upstream.close();
  });

  const lastBody = () => upstream.requests[upstream.requests.length - 1].body;

  it('a tool call round trip, not streamed: tools reach the upstream as sent, the tool call comes back as the upstream made it, metered as usual', async () => {
    const before = (await usageOf(t, key)).summary;
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Pick the red cube' }];
    const first = await client.chat.completions.create({ model: 'svc-fast-8b', messages, tools, tool_choice: 'auto', parallel_tool_calls: false });
    expect(lastBody()).toMatchObject({ model: 'llama3.1:8b', tools: roundTrip(tools), tool_choice: 'auto', parallel_tool_calls: false, stream: true });
    expect(first.model).toBe('svc-fast-8b');
    expect(first.choices).toHaveLength(1);
    const { message, finish_reason } = first.choices[0];
    expect(finish_reason).toBe('tool_calls');
    expect(message.content).toBeNull();
    expect(message.tool_calls).toEqual([
      { id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'move_arm', arguments: JSON.stringify({ request: 'Pick the red cube', step: 0 }) } },
    ]);
    const call = message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    // The stand-in's usage: 7 + prompt length in, one token per 5-character piece of arguments out.
    const pieces = Math.ceil(call.function.arguments.length / 5);
    expect(first.usage).toEqual({ prompt_tokens: 7 + 'Pick the red cube'.length, completion_tokens: pieces, total_tokens: 7 + 'Pick the red cube'.length + pieces });

    const followUp: OpenAI.ChatCompletionMessageParam[] = [...messages, message, { role: 'tool', tool_call_id: call.id, content: '{"reached":true}' }];
    const second = await client.chat.completions.create({ model: 'svc-fast-8b', messages: followUp, tools });
    // The assistant's tool call (content null) and the tool's answer reach the upstream as sent.
    expect(lastBody().messages).toEqual(roundTrip(followUp));
    expect(second.choices[0]).toMatchObject({ message: { role: 'assistant', content: words(20) }, finish_reason: 'stop' });

    const after = (await usageOf(t, key)).summary;
    expect(after.calls - before.calls).toBe(2);
    expect(after.total_tokens - before.total_tokens).toBe(first.usage!.total_tokens + second.usage!.total_tokens);
  });

  it('a tool call round trip, streamed: tool call deltas arrive as the upstream sent them, and the client\'s own tool runner completes the loop', async () => {
    const chunks = await collect(
      await client.chat.completions.create({ ...ask('Stack two cubes [parallel]'), tools, stream: true, stream_options: { include_usage: true } }),
    );
    const upstreamChunks = chunks.filter((c) => c.choices.length);
    // The first delta opens call 0 with its id and name; then argument pieces; call 1 likewise; then the finish.
    expect(upstreamChunks[0].choices[0].delta).toEqual({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'move_arm', arguments: '' } }] });
    expect(upstreamChunks[1].choices[0].delta).toEqual({ tool_calls: [{ index: 0, function: { arguments: '{"req' } }] });
    expect(upstreamChunks.at(-1)!.choices[0]).toMatchObject({ delta: {}, finish_reason: 'tool_calls' });
    expect(chunks.every((c) => c.id === chunks[0].id && c.model === 'svc-fast-8b')).toBe(true);
    const args = (index: number) => upstreamChunks.flatMap((c) => c.choices[0].delta.tool_calls?.filter((d) => d.index === index) ?? []).map((d) => d.function?.arguments ?? '').join('');
    expect(JSON.parse(args(0))).toEqual({ request: 'Stack two cubes [parallel]', step: 0 });
    expect(JSON.parse(args(1))).toEqual({ request: 'Stack two cubes [parallel]', step: 1 });
    const pieces = Math.ceil(args(0).length / 5) + Math.ceil(args(1).length / 5);
    expect(chunks.at(-1)!.usage).toMatchObject({ completion_tokens: pieces });

    // Not streamed, the gateway assembles the same calls from the upstream's stream.
    const whole = await client.chat.completions.create({ ...ask('Stack two cubes [parallel]'), tools });
    expect(whole.choices[0].message.tool_calls!.map((c) => (c as OpenAI.ChatCompletionMessageFunctionToolCall).function)).toEqual([
      { name: 'move_arm', arguments: args(0) },
      { name: 'open_gripper', arguments: args(1) },
    ]);

    const calledWith: unknown[] = [];
    const runner = client.chat.completions.runTools({
      ...ask('Place the cube on the shelf'),
      stream: true,
      stream_options: { include_usage: true },
      tools: [
        {
          type: 'function',
          function: {
            name: 'move_arm',
            description: 'Moves the arm to a pose.',
            parameters: tools[0].type === 'function' ? tools[0].function.parameters! : {},
            parse: JSON.parse,
            function: (input: unknown) => {
              calledWith.push(input);
              return { reached: true };
            },
          },
        },
      ],
    });
    expect(await runner.finalContent()).toBe(words(20));
    expect(calledWith).toEqual([{ request: 'Place the cube on the shelf', step: 0 }]);
    const sent = lastBody().messages;
    expect(sent.map((m: any) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(sent[1].tool_calls[0]).toMatchObject({ type: 'function', function: { name: 'move_arm' } });
    expect(sent[2]).toEqual({ role: 'tool', tool_call_id: sent[1].tool_calls[0].id, content: JSON.stringify({ reached: true }) });
  });

  it('response_format, seed, logprobs, n, max_completion_tokens and fields it does not know reach the upstream unchanged; its logprobs and fingerprint come back', async () => {
    const fields = {
      response_format: { type: 'json_schema', json_schema: { name: 'pose', schema: { type: 'object', properties: { x: { type: 'number' } } } } },
      seed: 42,
      logprobs: true,
      top_logprobs: 2,
      n: 1,
      max_completion_tokens: 5,
      service_tier: 'default',
      user: 'u-7',
      frequency_penalty: 0.1,
      engine_specific: { repetition_penalty: 1.1, guided_decoding_backend: 'xgrammar' },
    };
    const res = await client.chat.completions.create({ ...ask('Where is the cube?'), ...fields } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    expect(lastBody()).toEqual({ model: 'llama3.1:8b', messages: [{ role: 'user', content: 'Where is the cube?' }], ...fields, stream: true, stream_options: { include_usage: true } });
    expect(res).toMatchObject({ system_fingerprint: 'fp_standin', service_tier: 'default', model: 'svc-fast-8b' });
    expect(res.choices[0].finish_reason).toBe('length');
    expect(res.choices[0].logprobs!.content!.map((l) => l.token)).toEqual(['w0', ' w1', ' w2', ' w3', ' w4']);
    expect(res.usage).toMatchObject({ completion_tokens: 5 });

    const chunks = await collect(await client.chat.completions.create({ ...ask('Where is the cube?'), ...fields, stream: true, stream_options: { include_usage: true } } as OpenAI.ChatCompletionCreateParamsStreaming));
    expect(lastBody()).toMatchObject({ ...fields, stream_options: { include_usage: true } });
    const content = chunks.filter((c) => c.choices[0]?.delta.content);
    expect(content.map((c) => c.choices[0].logprobs!.content![0].token)).toEqual(['w0', ' w1', ' w2', ' w3', ' w4']);
    expect(chunks.every((c) => c.system_fingerprint === 'fp_standin')).toBe(true);
    expect(chunks.at(-1)!.usage).toMatchObject({ completion_tokens: 5 });
  });

  it('counts tools and tool calls with the tokenizer when the upstream reports no usage', async () => {
    const before = (await usageOf(t, key)).summary;
    const messages = [{ role: 'user' as const, content: '[no-usage] wave' }];
    const res = await client.chat.completions.create({ model: 'svc-fast-8b', messages, tools: [tools[1]], stream: true, stream_options: { include_usage: true } });
    const chunks = await collect(res);
    const call = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    const name = call[0].function!.name!;
    const args = call.map((d) => d.function?.arguments ?? '').join('');
    const expected = { prompt_tokens: encodeChat(messages, 'gpt-4o').length + encode(JSON.stringify([tools[1]])).length, completion_tokens: encode(name + args).length };
    expect(chunks.at(-1)!.usage).toMatchObject(expected);
    const after = (await usageOf(t, key)).summary;
    expect(after.prompt_tokens - before.prompt_tokens).toBe(expected.prompt_tokens);
    expect(after.completion_tokens - before.completion_tokens).toBe(expected.completion_tokens);
  });
});

describe('the sandbox honours n and json_object, and refuses by name what it cannot honour', () => {
  let t: TestApp;
  let key: string;
  let client: OpenAI;
  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen(0, '127.0.0.1');
    ({ key } = await t.accountWithKey({ tier: 'premium' }));
    client = openaiFor(t, key);
  });
  afterAll(() => t.close());

  it('n=3 gives three choices, the first the n=1 answer, usage over all three, streamed interleaved to the same texts', async () => {
    const one = await client.chat.completions.create(ask('Plan a grasp.'));
    const three = await client.chat.completions.create(ask('Plan a grasp.', { n: 3 }));
    expect(three.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    const texts = three.choices.map((c) => c.message.content!);
    expect(texts[0]).toBe(one.choices[0].message.content);
    expect(new Set(texts).size).toBe(3);
    expect(three.usage).toEqual({
      prompt_tokens: one.usage!.prompt_tokens,
      completion_tokens: texts.reduce((sum, text) => sum + encode(text).length, 0),
      total_tokens: one.usage!.prompt_tokens + texts.reduce((sum, text) => sum + encode(text).length, 0),
    });

    const chunks = await collect(await client.chat.completions.create({ ...ask('Plan a grasp.', { n: 3 }), stream: true, stream_options: { include_usage: true } }));
    const streamed = [0, 1, 2].map((i) => chunks.flatMap((c) => c.choices.filter((ch) => ch.index === i)).map((ch) => ch.delta.content ?? '').join(''));
    expect(streamed).toEqual(texts);
    expect(chunks.slice(0, 3).map((c) => c.choices[0].index)).toEqual([0, 1, 2]);
    expect(chunks.filter((c) => c.choices[0]?.finish_reason).map((c) => c.choices[0].index)).toEqual([0, 1, 2]);
    expect(chunks.at(-1)!.usage).toEqual(three.usage);
  });

  it('response_format json_object gives parseable JSON, streamed or not; text is the plain answer', async () => {
    const res = await client.chat.completions.create(ask('Give the pose as JSON.', { response_format: { type: 'json_object' } }));
    expect(JSON.parse(res.choices[0].message.content!)).toEqual({ answer: expect.any(String) });
    const chunks = await collect(await client.chat.completions.create({ ...ask('Give the pose as JSON.', { response_format: { type: 'json_object' }, n: 2 }), stream: true }));
    for (const index of [0, 1]) {
      const text = chunks.flatMap((c) => c.choices.filter((ch) => ch.index === index)).map((ch) => ch.delta.content ?? '').join('');
      expect(JSON.parse(text)).toEqual({ answer: expect.any(String) });
    }
    const plain = await client.chat.completions.create(ask('Give the pose as JSON.', { response_format: { type: 'text' } }));
    expect(plain.choices[0].message.content).toBe((await client.chat.completions.create(ask('Give the pose as JSON.'))).choices[0].message.content);
  });

  it('seed, user, metadata and the off values of logprobs and store are accepted; the same seed gives the same answer', async () => {
    const seeded = (seed: number) => client.chat.completions.create(ask('Tune a PID.', { seed, user: 'u-1', metadata: { run: 'ci' }, logprobs: false, store: false }));
    const a = await seeded(7);
    expect((await seeded(7)).choices[0].message.content).toBe(a.choices[0].message.content);
    expect((await seeded(8)).choices[0].message.content).not.toBe(a.choices[0].message.content);
  });

  const refused: [string, Record<string, unknown>, string][] = [
    ['tools', { tools }, 'tools'],
    ['tool_choice', { tool_choice: 'auto' }, 'tool_choice'],
    ['logprobs: true', { logprobs: true }, 'logprobs'],
    ['response_format json_schema', { response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } } }, 'response_format'],
    ['a field it does not know', { engine_specific: 1 }, 'engine_specific'],
    [
      'an earlier tool call in the conversation',
      { messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'call_1', content: 'ok' }] },
      'messages[1].tool_calls',
    ],
    ['an image part', { messages: [{ role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }] }, 'messages[0].content[1]'],
  ];

  it.each(refused)('%s: 400 unsupported_parameter naming it, as the client\'s BadRequestError, metering nothing', async (_name, fields, param) => {
    const before = (await usageOf(t, key)).summary.calls;
    const error = await client.chat.completions.create({ ...ask('hi'), ...fields } as OpenAI.ChatCompletionCreateParamsNonStreaming).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.error).toMatchObject({ code: 'unsupported_parameter', param, message: expect.stringContaining(`"${param}"`), request_id: expect.any(String) });
    expect(error.param).toBe(param);
    const streamed = await client.chat.completions.create({ ...ask('hi'), ...fields, stream: true } as OpenAI.ChatCompletionCreateParamsStreaming).catch((e) => e);
    expect(streamed).toMatchObject({ status: 400, error: { code: 'unsupported_parameter', param } });
    expect((await usageOf(t, key)).summary.calls).toBe(before);
  });

  it('n above 8, or not a positive integer, is 400 validation_failed naming n', async () => {
    for (const n of [9, 0, 1.5]) {
      const res = await t.request('POST', '/v1/chat/completions', { key, body: ask('hi', { n }) });
      expect([res.status, res.body.error.code]).toEqual([400, 'validation_failed']);
      expect(res.body.error.message).toContain('"n"');
    }
  });
});
