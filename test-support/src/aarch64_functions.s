// AArch64 functions for the annotate tests: branches, loads and stores, SIMD, system
// instructions, atomics, undecodable words, a literal pool. Assembled with llvm-mc; no relocation
// outside `main`/`helper` except the ADRP/ADD pair (left as assembled, 0).
	.text
	.type	main,@function
main:
	stp	x29, x30, [sp, #-32]!
	mov	x29, sp
	str	x19, [sp, #16]
	mov	w19, w0
	cmp	w0, #0x10
	b.ne	1f
	bl	helper
	add	x0, x0, #0x10
	sub	sp, sp, #0x20
	ldr	x1, [x0, #8]
	ldrb	w2, [x1], #1
	ldrh	w3, [x1, x2, lsl #1]
	ldr	x4, [x1, w2, sxtw #3]
	ldp	x5, x6, [sp], #16
	stur	w7, [x29, #-4]
	adrp	x8, data
	add	x8, x8, :lo12:data
	ldr	x9, =0x12345678
	movz	x10, #0x1234, lsl #16
	movk	x10, #0x5678
	mov	x11, #-1
	orr	x12, xzr, #0xff
	and	w13, w14, #0xfffffff0
	eor	x15, x16, x17, lsl #3
	madd	x0, x1, x2, x3
	mul	x0, x1, x2
	sdiv	w0, w1, w2
	lsl	x0, x1, #4
	asr	w2, w3, #31
	ubfx	x4, x5, #8, #8
	sxtw	x6, w7
	csel	x0, x1, x2, eq
	cset	w3, ne
	cinc	x4, x5, lt
1:	cbz	x0, 2f
	cbnz	w1, main
	tbz	w2, #3, 2f
	tbnz	x3, #40, main
	b	2f
2:	br	x16
	blr	x8
	ret
	ret	x1
	nop
	yield
	dmb	ish
	dsb	sy
	isb
	mrs	x0, tpidr_el0
	msr	tpidr_el0, x1
	mrs	x2, cntvct_el0
	svc	#0
	brk	#0x3e8
	hint	#34
	.inst	0x00000000
	.inst	0xffffffff
	.inst	0x00000000
	ldxr	x0, [x1]
	stxr	w2, x3, [x4]
	ldaxr	w5, [x6]
	stlr	x7, [x8]
	casal	x0, x1, [x2]
	ldadd	w3, w4, [x5]
	prfm	pldl1keep, [x0, #64]
	ldr	q0, [x0]
	str	d1, [sp, #8]
	add	v0.4s, v1.4s, v2.4s
	fmla	v3.2d, v4.2d, v5.d[1]
	ld1	{v0.16b, v1.16b}, [x0], #32
	st1	{v2.4s}, [x1]
	dup	v6.8h, w7
	mov	v8.16b, v9.16b
	umov	w0, v1.s[2]
	ins	v2.d[1], x3
	movi	v4.2d, #0
	movi	v5.16b, #0xff
	cmeq	v6.4s, v7.4s, #0
	addv	s8, v9.4s
	fadd	d0, d1, d2
	fmul	s3, s4, s5
	fmov	d6, x7
	fmov	s8, #1.0
	fcvtzs	w0, d1
	scvtf	d2, x3
	fcmp	d4, #0.0
	fcsel	d5, d6, d7, gt
	ext	v0.16b, v1.16b, v2.16b, #8
	tbl	v3.16b, {v4.16b}, v5.16b
	zip1	v6.4s, v7.4s, v8.4s
	uzp2	v9.8h, v10.8h, v11.8h
	ld4r	{v0.4s, v1.4s, v2.4s, v3.4s}, [x0]
	aese	v0.16b, v1.16b
	sha256h	q0, q1, v2.4s
	crc32cx	w0, w1, x2
	clz	x0, x1
	rev	w2, w3
	rbit	x4, x5
	neg	x6, x7
	mvn	w8, w9
	tst	x0, #0x1
	cmn	w1, #1
	ccmp	x2, #3, #4, ne
	adr	x0, main
	ldr	x1, main
	ldr	w2, [sp, #4092]
	ldp	q0, q1, [x0, #-32]
	ldr	x0, [sp], #16
	ldp	x29, x30, [sp], #32
	ret
	.size	main, .-main


	.type	helper,@function
helper:
	paciasp
	autiasp
	bti	c
	mov	x0, #0x2a
	ret
	// A literal pool (`$d`): objdump prints it as data.
	.ltorg
	.size	helper, .-helper
	.data
data:	.quad	0
