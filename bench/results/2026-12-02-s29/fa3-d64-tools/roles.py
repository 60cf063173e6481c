import sass, paths, lineinfo, sys, collections
li = lineinfo.load('ours_li.sass')
def role(chain, t):
    c = chain or ''
    if 'HGMMA' in t or 'WARPGROUP' in t: return 'GEMM issue/wait (HGMMA, ARRIVE, DEPBAR)'
    if 'mask.h' in c or 'consumer.h:286' in c or 'fwd_kernel.h:94' in c or 'consumer.h:354' in c: return 'mask test block_needs_mask (mask.h:88-91, consumer.h:286/354, cp_world LDC)'
    if 'consumer.h:282' in c: return 'softcap test (consumer.h:282)'
    if 'consumer.h:375' in c: return 'skip-rescale test (consumer.h:375 VOTE)'
    if 'softmax.h:98' in c or 'softmax.h:99' in c: return 'O rescale FMUL (softmax.h:98-99)'
    if 'softmax.h:56' in c or 'softmax.h:58' in c: return 'row max tree (softmax.h:56-58)'
    if 'softmax.h:65' in c or 'softmax.h:66' in c: return 'row max quad shuffle (softmax.h:65-66)'
    if 'softmax.h:70' in c or 'softmax.h:74' in c: return 'm_scaled / correction incl. -inf guards (softmax.h:70,74)'
    if 'softmax.h:80' in c or 'softmax.h:81' in c or 'softmax.h:14' in c: return 'exp2 args + EX2 (softmax.h:80-81)'
    if 'softmax.h:84' in c or 'softmax.h:86' in c: return 'row sum (softmax.h:84-86)'
    if 'cuda_bf16' in c: return 'convert_p F2FP'
    if 'wgmma.h:43' in c: return 'fence_proxy_async (MEMBAR, FENCE, @!PT LDS)'
    if 'consumer.h:406' in c or 'consumer.h:407' in c or 'consumer.h:427' in c: return 'mbarrier try-waits K(n), V(n-1), V(n) (consumer.h:406,407,427)'
    if 'consumer.h:189' in c or 'mbarrier.h' in c: return 'releases (consumer.h:189)'
    if 'consumer.h:117' in c or 'consumer.h:12' in c or 'consumer.h:13' in c or 'consumer.h:254' in c or 'consumer.h:262' in c or 'consumer.h:415' in c: return 'descriptors (UMOV/UIADD3, consumer.h:117-134)'
    if 'kernel_traits' in c or 'consumer.h:20' in c or 'consumer.h:36' in c: return 'stage/phase math (consumer.h:204-205, 367-369)'
    if 'consumer.h:353' in c: return 'loop counter / carried copies (consumer.h:353)'
    return 'other: ' + c
for n in sys.argv[1:]:
    path, _ = paths.run(n)
    c = collections.Counter(); ex = collections.defaultdict(list)
    for a, t in path:
        r = role(li.get(a), t); c[r] += 1; ex[r].append(sass.opcode(t))
    print('##', n, len(path))
    for r, v in c.most_common():
        print(f'| {r} | {v} | {", ".join(f"{k} {m}" for k, m in collections.Counter(ex[r]).most_common(6))} |')
