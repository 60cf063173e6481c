import re, sys, collections
LINE = re.compile(r'^\s*/\*([0-9a-f]{4,6})\*/\s+(.*?)\s*;')
def parse(path):
    ins = []
    for line in open(path):
        m = LINE.match(line)
        if m: ins.append((int(m.group(1), 16), m.group(2).strip()))
    return ins
def split_pred(t):
    m = re.match(r'^(@!?U?P\w+)\s+(.*)$', t)
    return (m.group(1), m.group(2)) if m else (None, t)
def opcode(t):
    return split_pred(t)[1].split()[0]
def target(t):
    p, body = split_pred(t)
    op = body.split()[0]
    if op.startswith('BRA') or op.startswith('BRX') :
        m = re.search(r'0x([0-9a-f]+)\s*$', body)
        if m: return int(m.group(1), 16)
    return None
def is_cond(t):
    p, body = split_pred(t)
    return p is not None and p not in ('@PT',)
def klass(t):
    op = opcode(t)
    base = op.split('.')[0]
    if base == 'HGMMA': return 'HGMMA'
    if op.startswith('MUFU.EX2'): return 'MUFU.EX2'
    if base == 'MUFU': return 'MUFU other'
    if base == 'FMNMX': return 'FMNMX'
    if base in ('FADD', 'FMUL', 'FFMA'): return base
    if base in ('FSETP', 'FSEL'): return 'FSETP/FSEL'
    if base == 'F2FP': return 'F2FP'
    if base == 'SHFL': return 'SHFL'
    if base == 'BAR': return 'BAR (named)'
    if op.startswith('SYNCS.PHASECHK'): return 'SYNCS try-wait'
    if op.startswith('SYNCS.ARRIVE'): return 'SYNCS.ARRIVE (release)'
    if base == 'SYNCS': return 'SYNCS other'
    if op.startswith('WARPGROUP.DEPBAR'): return 'WARPGROUP.DEPBAR'
    if op.startswith('WARPGROUP.ARRIVE'): return 'WARPGROUP.ARRIVE'
    if base in ('WARPSYNC',): return 'WARPSYNC'
    if base in ('BRA', 'BRX', 'JMP', 'RET', 'CALL', 'EXIT', 'BSYNC', 'BSSY'): return 'branch'
    if base in ('MEMBAR', 'FENCE', 'CCTL'): return 'MEMBAR/FENCE'
    if base in ('UMOV',): return 'UMOV'
    if base.startswith('U') or base in ('S2UR', 'R2UR'): return 'uniform other'
    if base in ('ISETP', 'PLOP3', 'VOTE', 'VOTEU', 'P2R', 'R2P'): return 'ISETP/PLOP3/VOTE'
    if base in ('IADD3', 'IMAD', 'LEA', 'LOP3', 'SHF', 'MOV', 'VIADD', 'IABS', 'SEL', 'IMNMX', 'VIADDMNMX', 'PRMT', 'S2R', 'CS2R', 'IMAD.WIDE', 'IADD', 'FLO', 'POPC', 'BREV'): return 'int/address'
    if base in ('LDC', 'LDS', 'LD', 'LDG', 'LDL', 'STL', 'STS', 'STG', 'LDSM', 'LDGSTS'): return 'memory/LDC'
    if base == 'NOP': return 'NOP'
    return 'other:' + base
ORDER = ['HGMMA','WARPGROUP.ARRIVE','WARPGROUP.DEPBAR','WARPSYNC','MUFU.EX2','MUFU other','FMNMX','FADD','FMUL','FFMA','FSETP/FSEL','F2FP','SHFL','BAR (named)','SYNCS try-wait','SYNCS.ARRIVE (release)','SYNCS other','MEMBAR/FENCE','branch','ISETP/PLOP3/VOTE','int/address','UMOV','uniform other','memory/LDC','NOP']
def blocks(ins):
    addrs = [a for a, _ in ins]
    idx = {a: i for i, a in enumerate(addrs)}
    leaders = {addrs[0]}
    for i, (a, t) in enumerate(ins):
        tg = target(t)
        op = opcode(t)
        if tg is not None and tg in idx: leaders.add(tg)
        if (tg is not None or op.startswith('EXIT') or op.startswith('BRA')) and i + 1 < len(ins): leaders.add(addrs[i + 1])
    return sorted(leaders), idx
def loops(ins):
    out = []
    for a, t in ins:
        tg = target(t)
        if tg is not None and tg <= a:
            body = [x for x in ins if tg <= x[0] <= a]
            hg = sum(1 for _, x in body if opcode(x).startswith('HGMMA'))
            out.append((tg, a, len(body), hg))
    return out
def walk(ins, start, end_addr, decisions, maxn=5000, trace=False):
    """Follow a path from start; stop when reaching end_addr (exclusive) after >0 steps.
    decisions: {branch_addr: True(taken)/False}. Unconditional BRA always taken. Default for conditional: fall through,
    but report it."""
    idx = {a: i for i, (a, _) in enumerate(ins)}
    i = idx[start]; path = []; undecided = []
    seen_counts = collections.Counter()
    while len(path) < maxn:
        a, t = ins[i]
        if path and a == end_addr: break
        path.append((a, t))
        seen_counts[a] += 1
        tg = target(t)
        op = opcode(t)
        if op.startswith('EXIT') and not is_cond(t): break
        if tg is not None:
            p, body = split_pred(t)
            if p is None or p == '@PT':
                i = idx[tg]; continue
            d = decisions.get(a)
            if d is None:
                undecided.append(a); d = False
            if d is True or (isinstance(d, int) and not isinstance(d, bool) and seen_counts[a] <= d):
                i = idx[tg]; continue
        i += 1
    return path, undecided
def count(path):
    c = collections.Counter(klass(t) for _, t in path)
    return c
