/*
 * gputap/_speedups.c — the hot pair of the Python package in C: the range
 * object (`with gputap.range("x")`, its enter and exit) and the call path of
 * the range decorator, calling libgputap's gputap_range_push/pop through two
 * function pointers.
 *
 * Owns: the two pointers and two flags (bound, enabled), all read and written
 * with the GIL held.  gputap/_core.py owns everything else and hands this
 * module what it needs once (setup): the name cache, the name encoder, the
 * function that loads the library and calls bind(), and the function that
 * builds the decorator's wrapper.  The library is loaded at the first range,
 * as in the ctypes path: the first enter calls _core._bind(), which passes
 * the addresses of the two functions of the library it loaded (bind), or 0
 * when none could be loaded (ranges then cost nothing and record nothing).
 *
 * Behaviour is that of _core._PyRange, the pure-ctypes path (kept as the
 * fallback: no compiler at install, or GPUTAP_NO_EXTENSION=1): a range object
 * may be entered again while open (a counter of its own pushes), exit pops
 * only what enter pushed, disable() stops new pushes and open ranges still
 * close, exceptions propagate.  The GIL is held across push and pop, as with
 * ctypes.PyDLL: both return at once and never block.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#if PY_VERSION_HEX < 0x03090000 /* Python 3.8 */
#define PyObject_CallNoArgs(f) PyObject_CallFunctionObjArgs((f), NULL)
#define PyObject_CallOneArg(f, a) PyObject_CallFunctionObjArgs((f), (a), NULL)
#endif

typedef int (*gt_push_fn)(const char *name);
typedef int (*gt_pop_fn)(void);

static gt_push_fn g_push; /* NULL: no library */
static gt_pop_fn g_pop;
static int g_bound;	     /* bind() was called since the last unbind() */
static int g_enabled = 1;    /* gputap.enable() / disable() */
static PyObject *g_names;    /* _core._names: str -> bytes */
static PyObject *g_encode;   /* _core._encode(name) -> bytes, raises on bad names */
static PyObject *g_bind;     /* _core._bind(): loads the library, calls bind() */
static PyObject *g_decorate; /* _core._decorate(range, fn) -> wrapper */

/* Load the library at first use (the hook calls bind()); -1 with an exception set. */
static int ensure_bound(void)
{
	if (g_bound)
		return 0;
	if (!g_bind) {
		PyErr_SetString(PyExc_RuntimeError, "gputap._speedups: setup() was not called");
		return -1;
	}
	PyObject *r = PyObject_CallNoArgs(g_bind);
	if (!r)
		return -1;
	Py_DECREF(r);
	if (!g_bound) { /* the hook did not bind: behave as without a library */
		g_push = NULL;
		g_pop = NULL;
		g_bound = 1;
	}
	return 0;
}

/* The encoded name (new reference), from the shared cache or the encoder. */
static PyObject *name_bytes(PyObject *name)
{
	PyObject *b = PyDict_GetItemWithError(g_names, name);
	if (b) {
		Py_INCREF(b);
	} else {
		if (PyErr_Occurred())
			return NULL;
		b = PyObject_CallOneArg(g_encode, name);
		if (!b)
			return NULL;
	}
	if (!PyBytes_Check(b)) {
		Py_DECREF(b);
		PyErr_SetString(PyExc_TypeError, "gputap: the range name encoder returned no bytes");
		return NULL;
	}
	return b;
}

/* ---- the range type ---- */

/* PyObject_HEAD is a macro with its own semicolon: kept on a line of its own */
/* clang-format off */
typedef struct {
	PyObject_HEAD
	PyObject *name;
	PyObject *b;       /* name as UTF-8, NUL-free */
	Py_ssize_t pushed; /* pushes of this object not yet popped */
} RangeObject;
/* clang-format on */

static PyTypeObject RangeType;

static int range_set(RangeObject *self, PyObject *name)
{
	if (!g_names) {
		PyErr_SetString(PyExc_RuntimeError, "gputap._speedups: setup() was not called");
		return -1;
	}
	PyObject *b = name_bytes(name);
	if (!b)
		return -1;
	Py_INCREF(name);
	Py_XSETREF(self->name, name);
	Py_XSETREF(self->b, b);
	self->pushed = 0;
	return 0;
}

static int range_init(PyObject *op, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {"name", NULL};
	PyObject *name;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "O:range", kwlist, &name))
		return -1;
	return range_set((RangeObject *)op, name);
}

#if PY_VERSION_HEX >= 0x03090000
/* range(name): the common call, without building an argument tuple. */
static PyObject *range_vectorcall(PyObject *type, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
	PyTypeObject *tp = (PyTypeObject *)type;
	Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
	if (nargs == 1 && (!kwnames || PyTuple_GET_SIZE(kwnames) == 0)) {
		RangeObject *self = (RangeObject *)tp->tp_alloc(tp, 0);
		if (!self)
			return NULL;
		if (range_set(self, args[0]) < 0) {
			Py_DECREF(self);
			return NULL;
		}
		return (PyObject *)self;
	}
	/* keywords or a wrong count: the generic path (tp_new, then tp_init) */
	PyObject *tuple = PyTuple_New(nargs);
	PyObject *kw = NULL, *self = NULL;
	if (!tuple)
		return NULL;
	for (Py_ssize_t i = 0; i < nargs; i++) {
		Py_INCREF(args[i]);
		PyTuple_SET_ITEM(tuple, i, args[i]);
	}
	if (kwnames && PyTuple_GET_SIZE(kwnames) > 0) {
		kw = PyDict_New();
		if (!kw)
			goto out;
		for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwnames); i++)
			if (PyDict_SetItem(kw, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) < 0)
				goto out;
	}
	self = tp->tp_new(tp, tuple, kw);
	if (self && tp->tp_init(self, tuple, kw) < 0)
		Py_CLEAR(self);
out:
	Py_DECREF(tuple);
	Py_XDECREF(kw);
	return self;
}
#endif

static int range_traverse(PyObject *op, visitproc visit, void *arg)
{
	RangeObject *self = (RangeObject *)op;
	Py_VISIT(self->name);
	Py_VISIT(self->b);
	return 0;
}

static int range_clear(PyObject *op)
{
	RangeObject *self = (RangeObject *)op;
	Py_CLEAR(self->name);
	Py_CLEAR(self->b);
	return 0;
}

static void range_dealloc(PyObject *op)
{
	PyObject_GC_UnTrack(op);
	range_clear(op);
	Py_TYPE(op)->tp_free(op);
}

static PyObject *range_enter(PyObject *op, PyObject *unused)
{
	RangeObject *self = (RangeObject *)op;
	if (ensure_bound() < 0)
		return NULL;
	if (g_enabled && g_push) {
		if (!self->b) {
			PyErr_SetString(PyExc_TypeError, "gputap.range: not initialised");
			return NULL;
		}
		g_push(PyBytes_AS_STRING(self->b));
		self->pushed++;
	}
	Py_INCREF(op);
	return op;
}

static PyObject *range_exit(PyObject *op, PyObject *const *args, Py_ssize_t nargs)
{
	RangeObject *self = (RangeObject *)op;
	if (nargs != 3) {
		PyErr_Format(PyExc_TypeError, "__exit__() takes 3 arguments (%zd given)", nargs);
		return NULL;
	}
	if (self->pushed) {
		self->pushed--;
		if (g_pop)
			g_pop();
	}
	Py_RETURN_FALSE;
}

static PyObject *range_call(PyObject *op, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {"fn", NULL};
	PyObject *fn;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "O:__call__", kwlist, &fn))
		return NULL;
	if (!g_decorate) {
		PyErr_SetString(PyExc_RuntimeError, "gputap._speedups: setup() was not called");
		return NULL;
	}
	return PyObject_CallFunctionObjArgs(g_decorate, op, fn, NULL);
}

static PyObject *range_repr(PyObject *op)
{
	RangeObject *self = (RangeObject *)op;
	return PyUnicode_FromFormat("gputap.range(%R)", self->name ? self->name : Py_None);
}

static PyMethodDef range_methods[] = {
    {"__enter__", range_enter, METH_NOARGS, "Open the range on this thread; returns the range."},
    {"__exit__", (PyCFunction)(void (*)(void))range_exit, METH_FASTCALL,
     "Close what __enter__ opened; exceptions propagate."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef range_members[] = {
    {"name", T_OBJECT_EX, offsetof(RangeObject, name), 0, "the range's name"},
    {"_b", T_OBJECT_EX, offsetof(RangeObject, b), READONLY, "the name as passed to the library"},
    {"_pushed", T_PYSSIZET, offsetof(RangeObject, pushed), READONLY, "pushes not yet popped"},
    {NULL, 0, 0, 0, NULL},
};

PyDoc_STRVAR(range_doc, "range(name)\n--\n\n"
			"A named range: `with gputap.range(\"forward\"):` or `@gputap.range(\"step\")`.\n\n"
			"Ranges nest per thread (the path of an inner range is \"outer/inner\"), are\n"
			"NVTX ranges too (nsys, ncu and torch.profiler see them), and close on the\n"
			"thread that opened them, also when the body raises.");

static PyTypeObject RangeType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gputap._core.range",
    .tp_basicsize = sizeof(RangeObject),
    .tp_dealloc = range_dealloc,
    .tp_repr = range_repr,
    .tp_call = range_call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = range_doc,
    .tp_traverse = range_traverse,
    .tp_clear = range_clear,
    .tp_methods = range_methods,
    .tp_members = range_members,
    .tp_init = range_init,
    .tp_new = PyType_GenericNew,
#if PY_VERSION_HEX >= 0x03090000
    .tp_vectorcall = range_vectorcall, /* calls of the type itself (3.9+) */
#endif
};

/* ---- module functions ---- */

static PyObject *m_setup(PyObject *mod, PyObject *args)
{
	PyObject *names, *encode, *bind, *decorate;
	if (!PyArg_ParseTuple(args, "O!OOO:setup", &PyDict_Type, &names, &encode, &bind, &decorate))
		return NULL;
	Py_INCREF(names);
	Py_XSETREF(g_names, names);
	Py_INCREF(encode);
	Py_XSETREF(g_encode, encode);
	Py_INCREF(bind);
	Py_XSETREF(g_bind, bind);
	Py_INCREF(decorate);
	Py_XSETREF(g_decorate, decorate);
	Py_RETURN_NONE;
}

static void *address(PyObject *v)
{
	if (v == Py_None)
		return NULL;
	return PyLong_AsVoidPtr(v);
}

static PyObject *m_bind(PyObject *mod, PyObject *args)
{
	PyObject *p, *q;
	if (!PyArg_ParseTuple(args, "OO:bind", &p, &q))
		return NULL;
	void *push = address(p), *pop = address(q);
	if (PyErr_Occurred())
		return NULL;
	if (!push != !pop) {
		PyErr_SetString(PyExc_ValueError, "bind: both addresses or neither");
		return NULL;
	}
	/* function pointers from data pointers: POSIX guarantees dlsym's conversion */
	g_push = (gt_push_fn)(uintptr_t)push;
	g_pop = (gt_pop_fn)(uintptr_t)pop;
	g_bound = 1;
	Py_RETURN_NONE;
}

static PyObject *m_unbind(PyObject *mod, PyObject *unused)
{
	g_push = NULL;
	g_pop = NULL;
	g_bound = 0;
	Py_RETURN_NONE;
}

static PyObject *m_set_enabled(PyObject *mod, PyObject *flag)
{
	int on = PyObject_IsTrue(flag);
	if (on < 0)
		return NULL;
	g_enabled = on;
	Py_RETURN_NONE;
}

static PyObject *m_state(PyObject *mod, PyObject *unused)
{
	return Py_BuildValue("{s:O,s:O,s:O}", "bound", g_bound ? Py_True : Py_False, "library",
			     g_push ? Py_True : Py_False, "enabled", g_enabled ? Py_True : Py_False);
}

/* push(b): the level, or -1 when disabled, not recording or without a library. */
static PyObject *m_push(PyObject *mod, PyObject *b)
{
	if (!PyBytes_Check(b)) {
		PyErr_SetString(PyExc_TypeError, "push: bytes expected");
		return NULL;
	}
	if (ensure_bound() < 0)
		return NULL;
	if (!g_enabled || !g_push)
		return PyLong_FromLong(-1);
	return PyLong_FromLong(g_push(PyBytes_AS_STRING(b)));
}

static PyObject *m_pop(PyObject *mod, PyObject *unused)
{
	if (ensure_bound() < 0)
		return NULL;
	return PyLong_FromLong(g_pop ? g_pop() : -1);
}

/* call(b, fn, args, kwargs): fn(*args, **kwargs) inside a range named b (the decorator). */
static PyObject *m_call(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
	if (nargs != 4 || !PyBytes_Check(args[0]) || !PyTuple_Check(args[2]) ||
	    (args[3] != Py_None && !PyDict_Check(args[3]))) {
		PyErr_SetString(PyExc_TypeError, "call(b: bytes, fn, args: tuple, kwargs: dict)");
		return NULL;
	}
	if (ensure_bound() < 0)
		return NULL;
	PyObject *kw = args[3] == Py_None ? NULL : args[3];
	if (!g_enabled || !g_push)
		return PyObject_Call(args[1], args[2], kw);
	g_push(PyBytes_AS_STRING(args[0]));
	PyObject *r = PyObject_Call(args[1], args[2], kw);
	if (g_pop) {
		if (r) {
			g_pop();
		} else { /* keep the exception while popping */
#if PY_VERSION_HEX >= 0x030C0000
			PyObject *e = PyErr_GetRaisedException();
			g_pop();
			PyErr_SetRaisedException(e);
#else
			PyObject *t, *v, *tb;
			PyErr_Fetch(&t, &v, &tb);
			g_pop();
			PyErr_Restore(t, v, tb);
#endif
		}
	}
	return r;
}

static PyMethodDef module_methods[] = {
    {"setup", m_setup, METH_VARARGS, "setup(names, encode, bind, decorate): the hooks of gputap._core"},
    {"bind", m_bind, METH_VARARGS, "bind(push_address, pop_address): the library's functions (0, 0: none)"},
    {"unbind", m_unbind, METH_NOARGS, "forget the functions: the next range calls the bind hook again"},
    {"set_enabled", m_set_enabled, METH_O, "set_enabled(flag): new ranges are pushed or not"},
    {"state", m_state, METH_NOARGS, "{'bound', 'library', 'enabled'}"},
    {"push", m_push, METH_O, "push(name_bytes) -> level, or -1"},
    {"pop", m_pop, METH_NOARGS, "pop() -> level, or -1"},
    {"call", (PyCFunction)(void (*)(void))m_call, METH_FASTCALL,
     "call(name_bytes, fn, args, kwargs): fn(*args, **kwargs) inside the range"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "gputap._speedups",
    .m_doc = "The range object and the decorator's call path in C (see gputap/_core.py).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__speedups(void);
PyMODINIT_FUNC PyInit__speedups(void)
{
	if (PyType_Ready(&RangeType) < 0)
		return NULL;
	PyObject *m = PyModule_Create(&module_def);
	if (!m)
		return NULL;
	Py_INCREF(&RangeType);
	if (PyModule_AddObject(m, "range", (PyObject *)&RangeType) < 0) {
		Py_DECREF(&RangeType);
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
