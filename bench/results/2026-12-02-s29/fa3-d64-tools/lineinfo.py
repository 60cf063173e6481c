import re
def load(path):
    m = {}; pending = []
    for line in open(path):
        if line.lstrip().startswith('//## File'):
            ms = re.findall(r'"[^"]*/([^/"]+)", line (\d+)', line)
            pending.append(' <- '.join(f'{f}:{l}' for f, l in ms))
            continue
        mm = re.match(r'^\s*/\*([0-9a-f]{4,6})\*/', line)
        if mm:
            if pending: m[int(mm.group(1), 16)] = pending[0]; last = pending[0]
            else: m[int(mm.group(1), 16)] = m.get('last')
            m['last'] = m[int(mm.group(1), 16)]
            pending = []
    return m
def short(s):
    if not s: return ''
    parts = s.split(' <- ')
    # innermost plus first consumer/softmax/mask frame
    keep = [parts[0]] + [p for p in parts[1:] if p.split(':')[0] in ('consumer.h','softmax.h','mask.h')][:1]
    return ' <- '.join(dict.fromkeys(keep))
