import sass, paths, sys, re
names = sys.argv[1:]
for n in names:
    path, und = paths.run(n)
    ev = []
    ex2 = [i for i, (a, t) in enumerate(path) if sass.klass(t) == 'MUFU.EX2']
    f2 = [i for i, (a, t) in enumerate(path) if sass.klass(t) == 'F2FP']
    fm = [i for i, (a, t) in enumerate(path) if sass.klass(t) == 'FMUL' ]
    hg = [i for i, (a, t) in enumerate(path) if sass.klass(t) == 'HGMMA']
    print(f'## {n}: {len(path)} instr')
    for i, (a, t) in enumerate(path):
        k = sass.klass(t)
        if k in ('HGMMA',) and i not in (hg[0], hg[3], hg[4], hg[-1]): continue
        if k in ('BAR (named)', 'SYNCS try-wait', 'SYNCS.ARRIVE (release)', 'WARPGROUP.DEPBAR', 'WARPGROUP.ARRIVE', 'MEMBAR/FENCE', 'HGMMA') or 'VOTE' in t:
            nex = sum(1 for j in ex2 if j < i)
            print(f'  {i:4d} {a:05x} {t[:70]:70s} ex2_before={nex}')
    dep0 = [i for i, (a, t) in enumerate(path) if 'DEPBAR.LE gsb0, 0x0' in t][0]
    dep1 = [i for i, (a, t) in enumerate(path) if 'DEPBAR.LE gsb0, 0x1' in t][0]
    print(f'  first EX2 {ex2[0]}, last EX2 {ex2[-1]}, EX2 between last HGMMA({hg[-1]}) and DEPBAR0({dep0}): {sum(1 for j in ex2 if hg[-1] < j < dep0)}')
    print(f'  S ready(DEPBAR1) -> first EX2: {ex2[0]-dep1}; after DEPBAR0 -> end: {len(path)-dep0}; after last EX2 -> end: {len(path)-1-ex2[-1]}')
    print(f'  F2FP idx {f2[0]}..{f2[-1]}; FMUL idx {fm[:3]}..{fm[-1] if fm else None}')
