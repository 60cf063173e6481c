import sass, collections, sys
P = {}
# ours 5635, loop 0x8f90..0xd740 (back edge @!P0 BRA 0x8f90 at 0xd740)
ours_common = {0xd740: True, 0x9080: False, 0x90d0: False, 0x94e0: True, 0xa150: False, 0xc590: False}
causal = {0xa170: False, 0xa1c0: True, 0xa430: True, 0xa6f0: True}
noncausal = {0xa170: True, 0xa460: True}
P['ours causal'] = ('ours_all.sass', 0x8f90, {**ours_common, **causal, 0xd2e0: True})
P['ours causal +rescale'] = ('ours_all.sass', 0x8f90, {**ours_common, **causal, 0xd2e0: False})
P['ours non-causal'] = ('ours_all.sass', 0x8f90, {**ours_common, **noncausal, 0xd2e0: True})
P['ours non-causal +rescale'] = ('ours_all.sass', 0x8f90, {**ours_common, **noncausal, 0xd2e0: False})
P['FA3 c28 causal WG0'] = ('fa3_A_c28_causal_paged_h1.sass', 0xb520, {0xd050: True, 0xb5a0: False, 0xb5f0: True, 0xb7f0: False, 0xb830: True})
P['FA3 c28 causal WG1/2'] = ('fa3_A_c28_causal_paged_h1.sass', 0xb520, {0xd050: True, 0xb5a0: True, 0xb7f0: True})
P['FA3 c28 causal H8 WG0'] = ('fa3_A8_c28_causal_paged_h8.sass', 0xb320, {0xcdd0: True, 0xb3a0: False, 0xb3f0: True, 0xb5d0: False, 0xb610: True})
P['FA3 c28 causal H8 WG1/2'] = ('fa3_A8_c28_causal_paged_h8.sass', 0xb320, {0xcdd0: True, 0xb3a0: True, 0xb5d0: True})
P['FA3 c27 causal TMA WG0'] = ('fa3_B_c27_causal_tma_h1.sass', 0xb730, {0xd320: True, 0xb790: False, 0xb7e0: True, 0xba60: False, 0xbab0: True})
P['FA3 c27 causal TMA WG1/2'] = ('fa3_B_c27_causal_tma_h1.sass', 0xb730, {0xd320: True, 0xb790: True, 0xba60: True})
P['FA3 c28 noncausal 192x160 WG0'] = ('fa3_C_c28_noncausal_paged_h1.sass', 0x3980, {0x5ae0: True, 0x39d0: False, 0x3a40: True, 0x3c90: False, 0x3cd0: True})
P['FA3 c28 noncausal 192x160 WG1/2'] = ('fa3_C_c28_noncausal_paged_h1.sass', 0x3980, {0x5ae0: True, 0x39d0: True, 0x3c90: True})
P['FA3 c27 noncausal 192x192 WG0'] = ('fa3_D_c27_noncausal_tma_h1.sass', 0x4280, {0x69f0: True, 0x42e0: False, 0x4330: True, 0x45f0: False, 0x4640: True})
P['FA3 c27 noncausal 192x192 WG1/2'] = ('fa3_D_c27_noncausal_tma_h1.sass', 0x4280, {0x69f0: True, 0x42e0: True, 0x45f0: True})
def run(name, keep=False):
    f, start, dec = P[name]
    ins = sass.parse(f)
    # end = the back edge's fall-through: stop when we come back to start
    path, und = sass.walk(ins, start, start, dec)
    return path, und
if __name__ == '__main__':
    names = sys.argv[1:] or list(P)
    res = {}
    for n in names:
        path, und = run(n)
        res[n] = sass.count(path)
        res[n]['_total'] = len(path)
        if und: print(n, 'undecided branches:', [hex(a) for a in und])
    keys = sass.ORDER + sorted({k for c in res.values() for k in c if k not in sass.ORDER and k != '_total'})
    print('| class | ' + ' | '.join(names) + ' |')
    print('|---' * (len(names) + 1) + '|')
    for k in keys:
        if any(res[n].get(k) for n in names):
            print(f'| {k} | ' + ' | '.join(str(res[n].get(k, 0)) for n in names) + ' |')
    print('| **total** | ' + ' | '.join(f"**{res[n]['_total']}**" for n in names) + ' |')
