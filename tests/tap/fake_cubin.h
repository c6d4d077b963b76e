/*
 * tests/tap/fake_cubin.h — the stand-in CUPTI's module (tests/tap/fake_cupti.c) and the unit tests:
 * a small ELF64 cubin whose symbol table holds, at indices 1..4, a section symbol, _Z6kernelv
 * (function), _Z5otherv (function) and _Z6unusedv (function), and a .comment "FAKECUBIN ..." by
 * which the stand-ins (fake_nvdisasm.sh) know it.  Its -fun list for the first two is "2,3".
 */
#ifndef GT_TESTS_FAKE_CUBIN_H
#define GT_TESTS_FAKE_CUBIN_H

#include <elf.h>
#include <stddef.h>
#include <string.h>

#define FAKE_CUBIN_MAX 1024

/* Builds the module into buf (FAKE_CUBIN_MAX bytes); returns its size. */
static inline size_t fake_cubin_build(unsigned char *buf)
{
	static const char shstr[] = "\0.shstrtab\0.strtab\0.symtab\0.comment";
	static const char str[] = "\0_Z6kernelv\0_Z5otherv\0_Z6unusedv";
	static const char comment[] = "FAKECUBIN: the stand-in module of _Z6kernelv and _Z5otherv";
	Elf64_Sym sym[5];
	memset(sym, 0, sizeof(sym));
	sym[1].st_info = ELF64_ST_INFO(STB_LOCAL, STT_SECTION);
	sym[2].st_name = 1, sym[2].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
	sym[3].st_name = 12, sym[3].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
	sym[4].st_name = 22, sym[4].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
	memset(buf, 0, FAKE_CUBIN_MAX);
	size_t off = sizeof(Elf64_Ehdr);
	size_t o_shstr = off, o_str = (off += sizeof(shstr)), o_sym = (off += sizeof(str));
	o_sym = (o_sym + 7) & ~(size_t)7;
	size_t o_com = o_sym + sizeof(sym), o_sh = (o_com + sizeof(comment) + 7) & ~(size_t)7;
	memcpy(buf + o_shstr, shstr, sizeof(shstr));
	memcpy(buf + o_str, str, sizeof(str));
	memcpy(buf + o_sym, sym, sizeof(sym));
	memcpy(buf + o_com, comment, sizeof(comment));
	Elf64_Shdr sh[5];
	memset(sh, 0, sizeof(sh));
	sh[1] = (Elf64_Shdr){.sh_name = 1, .sh_type = SHT_STRTAB, .sh_offset = o_shstr, .sh_size = sizeof(shstr)};
	sh[2] = (Elf64_Shdr){.sh_name = 11, .sh_type = SHT_STRTAB, .sh_offset = o_str, .sh_size = sizeof(str)};
	sh[3] = (Elf64_Shdr){.sh_name = 19, .sh_type = SHT_SYMTAB, .sh_offset = o_sym, .sh_size = sizeof(sym),
			     .sh_link = 2, .sh_entsize = sizeof(Elf64_Sym)};
	sh[4] = (Elf64_Shdr){.sh_name = 27, .sh_type = SHT_PROGBITS, .sh_offset = o_com, .sh_size = sizeof(comment)};
	memcpy(buf + o_sh, sh, sizeof(sh));
	Elf64_Ehdr eh;
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = 190; /* EM_CUDA */
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_shoff = o_sh;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 5;
	eh.e_shstrndx = 1;
	memcpy(buf, &eh, sizeof(eh));
	return o_sh + sizeof(sh);
}

#endif
