// A shared library for the zip-archive uprobe test: stored in a zip and run from it the way
// Android's linker maps an APK's libraries. Its one function makes no calls and touches no
// globals, so it runs from a plain mmap of the archive without the dynamic linker.
int rbt_zip_work(int x) { return x * 2 + 1; }
