import sass, paths, lineinfo, sys
n = sys.argv[1]; lo = int(sys.argv[2]); hi = int(sys.argv[3])
path, _ = paths.run(n)
li = lineinfo.load('ours_li.sass') if n.startswith('ours') else {}
for i, (a, t) in enumerate(path[lo:hi], lo):
    print(f'{i:4d} {a:05x} {t[:72]:72s} {lineinfo.short(li.get(a))[:70]}')
