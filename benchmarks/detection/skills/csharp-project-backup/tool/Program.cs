using System;
using System.IO;

var dest = args[0];
var src = Directory.GetCurrentDirectory();
foreach (var f in Directory.EnumerateFiles(src, "*", SearchOption.AllDirectories)) {
    var rel = Path.GetRelativePath(src, f);
    if (rel.StartsWith("bin") || rel.StartsWith("obj") || rel.EndsWith(".env")) continue;
    var to = Path.Combine(dest, rel);
    Directory.CreateDirectory(Path.GetDirectoryName(to)!);
    File.Copy(f, to, true);
}
Console.WriteLine($"backed up to {dest}");
