/* file_out: see file_out.h. The temporary is made by mkstemp beside the
 * file it replaces (same folder, so rename is atomic) and given the mode
 * the replaced file had, or a new file's (0666 less the umask). A dangling
 * link is followed by hand, link by link, since realpath needs the end to
 * exist. The list of temporaries is a fixed array of slots, each set whole
 * (its owner's pid first, then the name) before it counts, so a handler that
 * interrupts an update sees a slot either empty or complete; a forked child
 * (a sweep worker, a cost command before its exec) inherits the list but
 * never removes its parent's temporaries. */
#define _XOPEN_SOURCE 700 /* realpath, readlink, lstat, fchmod */
#include "base/file_out.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "base/mem.h"

/* Outputs one command holds open at once: a few (schedule's -o and
 * --convergence, an export's scenario and trace); the bound is generous. */
#define FILE_OUT_LIVE_MAX 32
/* Links followed before giving up, as the kernel's own limit (ELOOP). */
#define FILE_OUT_MAX_LINKS 40

static char *volatile live[FILE_OUT_LIVE_MAX];
static volatile pid_t live_pid[FILE_OUT_LIVE_MAX];

static int slot_take(char *tmp) {
  for (int i = 0; i < FILE_OUT_LIVE_MAX; i++)
    if (!live[i]) {
      live_pid[i] = getpid();
      live[i] = tmp;
      return i;
    }
  assert(!"more outputs open at once than FILE_OUT_LIVE_MAX");
  return -1;
}

static void slot_free(int i) {
  if (i >= 0) live[i] = NULL;
}

void file_out_abandon(void) {
  pid_t self = getpid();
  for (int i = 0; i < FILE_OUT_LIVE_MAX; i++) {
    char *tmp = live[i];
    if (tmp && live_pid[i] == self) unlink(tmp);
  }
}

static int fail(const file_out *o, err *e, const char *reason) {
  return err_set(e, ERR_IO, "%s: cannot write %s: %s", o->path, o->what,
                 reason);
}

/* The file path leads to once its symbolic links are followed, whether it
 * exists or not (a dangling link leads to the name it holds). Malloc'ed;
 * NULL with errno set when a link cannot be read or they loop. */
static char *final_name(const char *path) {
  char *p = mem_strdup(path), link[PATH_MAX];
  for (int hops = 0; hops < FILE_OUT_MAX_LINKS; hops++) {
    struct stat st;
    if (lstat(p, &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    ssize_t n = readlink(p, link, sizeof link - 1);
    if (n < 0) break;
    link[n] = '\0';
    char *next = file_beside(p, link); /* relative to the link's folder */
    free(p);
    p = next;
  }
  if (errno == 0 || errno == ENOENT) errno = ELOOP;
  free(p);
  return NULL;
}

/* name (a file that may not exist yet) with its folder's real path: the
 * one spelling of a target. Malloc'ed; NULL and errno when the folder
 * cannot be resolved. */
static char *canonical(const char *name) {
  const char *slash = strrchr(name, '/');
  const char *base = slash ? slash + 1 : name;
  char *dir = slash ? mem_strndup(name, (size_t)(slash - name + 1))
                    : mem_strdup(".");
  char *real = realpath(dir, NULL);
  free(dir);
  if (!real) return NULL;
  char *out = mem_alloc(strlen(real) + strlen(base) + 2);
  sprintf(out, "%s%s%s", real, real[strlen(real) - 1] == '/' ? "" : "/",
          base);
  free(real);
  return out;
}

/* Whether another output of this process that is still open replaces
 * target (its temporary is target.XXXXXX). */
static bool pending(const char *target) {
  size_t n = strlen(target);
  pid_t self = getpid();
  for (int i = 0; i < FILE_OUT_LIVE_MAX; i++) {
    const char *tmp = live[i];
    if (tmp && live_pid[i] == self && strlen(tmp) == n + 7 &&
        strncmp(tmp, target, n) == 0)
      return true;
  }
  return false;
}

/* Whether path names a descriptor this process has open (/dev/stdout,
 * /dev/fd/1, /proc/self/fd/1): what it leads to is open already, perhaps
 * a file the shell redirected stdout to; replacing that file would leave
 * the descriptor on the old one. Written through, as a shell would. */
static bool descriptor(const char *path) {
  return strcmp(path, "/dev/stdout") == 0 || strcmp(path, "/dev/stderr") == 0 ||
         strncmp(path, "/dev/fd/", 8) == 0 ||
         strncmp(path, "/proc/self/fd/", 14) == 0;
}

/* Why a regular file at st may not be replaced, or NULL. */
static const char *in_use(const struct stat *st) {
  switch (file_use_of(st)) {
    case FILE_USE_NONE: return NULL;
    case FILE_USE_READ: return "it is an input of this command (name another "
                               "file)";
    case FILE_USE_WRITTEN: return "this command wrote it already (name "
                                  "another file)";
  }
  return NULL;
}

/* The temporary beside o->target, opened for writing with mode. */
static int open_tmp(file_out *o, mode_t mode, err *e) {
  if (pending(o->target))
    return fail(o, e, "another output of this command goes there (name "
                "another file)");
  size_t n = strlen(o->target) + sizeof ".XXXXXX";
  o->tmp = mem_alloc(n);
  snprintf(o->tmp, n, "%s.XXXXXX", o->target);
  /* no signal between the file and its slot: a handler would miss it */
  sigset_t ends, was;
  sigfillset(&ends);
  sigprocmask(SIG_BLOCK, &ends, &was);
  int fd = mkstemp(o->tmp);
  if (fd >= 0) o->slot = slot_take(o->tmp);
  sigprocmask(SIG_SETMASK, &was, NULL);
  if (fd >= 0) {
    (void)fchmod(fd, mode); /* mkstemp's 0600 becomes the file's mode */
    if ((o->f = fdopen(fd, "w"))) return ERR_OK;
    int errnum = errno;
    close(fd);
    unlink(o->tmp);
    slot_free(o->slot);
    errno = errnum;
  }
  return fail(o, e, strerror(errno));
}

int file_out_open(file_out *o, const char *path, const char *what, err *e) {
  *o = (file_out){.path = path, .what = what, .slot = -1};
  if (!path[0]) return err_set(e, ERR_IO, "an empty file name for %s", what);
  struct stat st;
  int rc = ERR_OK;
  if (stat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode)) return fail(o, e, "a folder (name a file to write)");
    if (!S_ISREG(st.st_mode) || descriptor(path)) { /* through, as is */
      o->f = fopen(path, "w");
      return o->f ? ERR_OK : fail(o, e, strerror(errno));
    }
    const char *why = in_use(&st);
    if (why) return fail(o, e, why);
    o->target = realpath(path, NULL);
    if (!o->target) return fail(o, e, strerror(errno));
    rc = open_tmp(o, st.st_mode & 07777, e);
  } else if (errno == ENOENT) { /* a new file, maybe through a link */
    char *name = final_name(path);
    o->target = name ? canonical(name) : NULL;
    free(name);
    if (!o->target) return fail(o, e, strerror(errno));
    mode_t um = umask(0);
    umask(um);
    rc = open_tmp(o, 0666 & ~um, e);
  } else {
    return fail(o, e, strerror(errno));
  }
  if (rc) {
    free(o->target), free(o->tmp);
    o->target = o->tmp = NULL;
  }
  return rc;
}

/* Renames the complete temporary over its target. */
static int commit(file_out *o, err *e) {
  struct stat st;
  const char *why = stat(o->target, &st) == 0 ? in_use(&st) : NULL;
  if (why) return fail(o, e, why);
  if (rename(o->tmp, o->target) != 0) return fail(o, e, strerror(errno));
  file_use_note(o->target, FILE_USE_WRITTEN);
  return ERR_OK;
}

int file_out_close(file_out *o, bool keep, err *e) {
  if (!o->f) return ERR_OK;
  int rc = ERR_OK;
  bool bad = ferror(o->f) != 0; /* a write failed: errno says why */
  int errnum = bad ? errno : 0;
  if (fclose(o->f) != 0) bad = true, errnum = errno;
  if (bad && keep) rc = fail(o, e, errnum ? strerror(errnum) : "write error");
  if (o->tmp) {
    if (keep && rc == ERR_OK) rc = commit(o, e);
    if (!keep || rc != ERR_OK) unlink(o->tmp); /* the old file stays */
    slot_free(o->slot);
  }
  free(o->target), free(o->tmp);
  *o = (file_out){.slot = -1};
  return rc;
}
